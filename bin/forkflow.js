#!/usr/bin/env node
'use strict';
// The `forkflow` command: runs the compiled CLI (npm start / npm test build it first).
require('../lib/cli/main.js')
  .main(process.argv)
  .catch((err) => {
    console.error(err && err.stack ? err.stack : String(err));
    process.exitCode = 1;
  });
