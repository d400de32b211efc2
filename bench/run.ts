/**
 * `npm run bench`: every benchmark, bounded in time, printing figures (not a test).
 * Select some with arguments: `npm run bench -- api scale`.
 */
const all = ['store', 'api', 'cloudsim', 'scale'] as const;
type Name = (typeof all)[number];

const wanted = process.argv.slice(2).filter((a): a is Name => (all as readonly string[]).includes(a));
const names: readonly Name[] = wanted.length > 0 ? wanted : all;

for (const name of names) {
  const started = Date.now();
  console.log(`\n== bench ${name} ==`);
  switch (name) {
    case 'store':
      await (await import('./store.ts')).benchStore();
      break;
    case 'api':
      await (await import('./api.ts')).benchApi();
      break;
    case 'cloudsim':
      await (await import('./cloudsim.ts')).benchCloudsim();
      break;
    case 'scale':
      await (await import('./scale.ts')).benchScale();
      break;
  }
  console.log(`(${name}: ${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
process.exit(0);
