/**
 * A label-safe form of a name or other text: the store's label index finds rows by it, and
 * the full value is compared on each row found.
 */
export function labelValue(s: string): string {
  return s.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 63);
}
