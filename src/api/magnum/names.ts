import { randomInt } from 'node:crypto';

/**
 * Magnum's generated names for templates and clusters created without one:
 * `<greek letter>-<1..24>-<kind>`, e.g. `zeta-22-cluster`.
 */
const GREEK = [
  'alpha',
  'beta',
  'gamma',
  'delta',
  'epsilon',
  'zeta',
  'eta',
  'theta',
  'iota',
  'kappa',
  'lambda',
  'mu',
  'nu',
  'xi',
  'omicron',
  'pi',
  'rho',
  'sigma',
  'tau',
  'upsilon',
  'phi',
  'chi',
  'psi',
  'omega',
];

export function generateName(kind: 'cluster' | 'template'): string {
  return `${GREEK[randomInt(GREEK.length)]}-${randomInt(1, 25)}-${kind}`;
}
