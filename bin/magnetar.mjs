#!/usr/bin/env node
import { register } from 'tsx/esm/api';
register();
const { magnetarProgram } = await import('../src/cli/magnetar.ts');
await magnetarProgram().parseAsync(process.argv);
