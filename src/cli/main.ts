#!/usr/bin/env node
import { applyHeapSettings } from '../util/heap-growth.js';

// Before any command allocates: the daemon's RSS depends on it (src/util/heap-growth.ts).
applyHeapSettings();
const { runProgram } = await import('./program.js');
await runProgram(process.argv);
