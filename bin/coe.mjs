#!/usr/bin/env node
import { register } from 'tsx/esm/api';
register();
const { runCoe } = await import('../src/cli/coe.ts');
process.exitCode = await runCoe(process.argv);
