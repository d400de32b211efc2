import { InvalidArgumentError } from 'commander';

/** Commander parser for an integer option or argument (`--node-count 3`). */
export function parseInteger(name: string, min?: number): (value: string) => number {
  return (value) => {
    if (!/^[-+]?\d+$/.test(value.trim())) throw new InvalidArgumentError('Expected an integer.');
    const n = Number(value);
    if (min !== undefined && n < min) throw new InvalidArgumentError(`${name} must be at least ${min}.`);
    return n;
  };
}

/** Commander parser for a number option (`--timeout 1.5`). */
export function parseNumber(name: string, min?: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('Expected a number.');
    if (min !== undefined && n < min) throw new InvalidArgumentError(`${name} must be at least ${min}.`);
    return n;
  };
}
