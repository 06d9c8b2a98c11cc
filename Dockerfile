# The engine image: Node 22 LTS, the line the project pins (package.json engines, node-linux-* packages).
FROM node:22.23.3-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# The web page is built here (vite is a devDependency), then the devDependencies go.
RUN node scripts/build-web.mjs && npm prune --omit=dev --no-audit --no-fund
ENV CURVESTREAM_DATA_DIR=/data
VOLUME /data
EXPOSE 8080 8081
CMD ["npm", "start"]
