#!/usr/bin/env node
// The `report-connector` command, linked into node_modules/.bin by the `report-connector-bin` dependency (this
// folder). npx runs a command found there at once; a bin of the project's own package.json would make npx read
// the whole dependency tree and, the first time, install the project into its cache (seconds, up to tens).
await import('../dist/src/cli/bin.js');
