#!/usr/bin/env node
import { main } from './main.js';

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
