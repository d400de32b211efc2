#!/usr/bin/env -S node --max-semi-space-size=64
import { register } from 'tsx/esm/api';
register();
const { magnetarProgram } = await import('../src/cli/magnetar.ts');
await magnetarProgram().parseAsync(process.argv);
