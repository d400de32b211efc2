/**
 * Errors of the `coe` command and how they become one line on stderr plus an exit code.
 */

/** The command line itself is wrong (unknown value, malformed argument): exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The command ran and failed in a way the user can act on (file exists, no API address): exit code 1. */
export class CommandFailedError extends Error {
  override readonly name = 'CommandFailedError';
}

/** Exit codes of `coe`. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
