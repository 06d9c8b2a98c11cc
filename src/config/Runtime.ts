/**
 * The Node.js line the project runs on. The project pins its own runtime (the `node-linux-*`
 * optional dependencies put Node 22 first on `PATH` for every npm script), and the native uWS
 * build is chosen for that line; starting on another major would run untested code paths (an
 * end-of-life runtime, or an ABI the lockfile was never measured on), so the engine and the CLI
 * refuse to start with a message that says how to run them instead.
 */

/** The supported major; `package.json` `engines` and the pinned `node-linux-*` packages agree (a conformance test checks). */
export const NODE_MAJOR = 22

/** `undefined` when `version` (as in `process.version`) is on the supported line, else why not. */
export const unsupportedNode = (version: string): string | undefined => {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1] ?? Number.NaN)
  if (major === NODE_MAJOR) return undefined
  return (
    `curvestream runs on Node.js ${NODE_MAJOR} and this is Node.js ${version}. ` +
    `Run it through npm (\`npm start\`, \`npm test\`, \`npm run cli\`), which uses the Node.js ${NODE_MAJOR} that \`npm ci\` installed into node_modules/.bin.`
  )
}
