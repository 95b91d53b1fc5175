#!/usr/bin/env node
import { capYoungGeneration, limitHeapGrowth, stopPretenuring } from '../util/heap-growth.js';

// Before any command allocates: the daemon's RSS depends on it (src/util/heap-growth.ts).
limitHeapGrowth();
capYoungGeneration();
stopPretenuring();
const { runProgram } = await import('./program.js');
await runProgram(process.argv);
