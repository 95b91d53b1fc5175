#!/usr/bin/env node
import { limitHeapGrowth } from '../util/heap-growth.js';
import { restartWithDaemonNodeFlags } from './daemon-node-flags.js';

// The entry point stays this small so that a restart with the daemon's node flags happens before the commands'
// modules are loaded (they would be loaded again after it).
restartWithDaemonNodeFlags(process);
// Before any command allocates: the daemon's RSS depends on it (src/util/heap-growth.ts).
limitHeapGrowth();
const { runProgram } = await import('./program.js');
await runProgram(process.argv);
