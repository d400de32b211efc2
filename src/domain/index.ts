export * from './errors.ts';
export * from './object.ts';
export * from './labels.ts';
export * from './magnum.ts';
export * from './auth.ts';
export * from './config.ts';
export * from './clock.ts';
