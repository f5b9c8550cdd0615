#!/usr/bin/env node
'use strict';
// The `forkflow` command: runs the compiled CLI (npm start / npm test build it first).
// main() prints every error as one line; this catch is for a failure to load the CLI itself.
require('../lib/cli/main.js')
  .main(process.argv)
  .catch((err) => {
    process.stderr.write(`forkflow: ${err && err.message ? err.message : String(err)}\n`);
    if (process.argv.includes('--debug') && err && err.stack) process.stderr.write(`${err.stack}\n`);
    process.exitCode = 1;
  });
