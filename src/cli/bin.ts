#!/usr/bin/env node

// The app runs on the Node 24 the `node` dependency installs (node_modules/.bin/node, first on the PATH under npx
// and npm scripts). Started by a path in a shell whose `node` is older, it would fail deep in a dependency.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `report-connector needs Node 24; this is Node ${process.versions.node}. Run it as \`npx report-connector …\` from the project folder, or with node_modules/.bin/node.\n`,
  );
  process.exit(1);
}

const { main } = await import('./main.js');
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Long-running commands resolve only after closing everything; a one-shot command that left a handle
    // open (a slow socket) must not keep the shell waiting.
    setTimeout(() => process.exit(code), 2_000).unref();
  },
  (err: unknown) => {
    process.stderr.write(`report-connector: ${String(err)}\n`);
    process.exit(1);
  },
);
