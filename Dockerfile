# The engine image: Node 20 (the uWebSockets.js build ships binaries for Node 16/18/20 only).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
ENV CURVESTREAM_DATA_DIR=/data
VOLUME /data
EXPOSE 8080 8081
CMD ["npm", "start"]
