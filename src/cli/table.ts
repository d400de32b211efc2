/**
 * The `+----+` grid the `openstack` client prints (PrettyTable with one space of padding):
 * column width = widest line of header or cell, multi-line cells span several text lines,
 * headers aligned like their column.
 */

/** Column alignment: left or right (numbers in list tables). */
export type Align = 'l' | 'r';

/** Render a grid; `align[i]` defaults to left. Every line ends with a newline. */
export function renderTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  align: readonly Align[] = [],
): string {
  const split = (cell: string) => cell.replace(/\r\n/g, '\n').replace(/\r/g, ' ').split('\n');
  const widths = headers.map((h, i) =>
    Math.max(displayWidth(h), ...rows.flatMap((r) => split(r[i] ?? '').map(displayWidth))),
  );
  const rule = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+\n`;
  const line = (cells: readonly string[]) =>
    `|${cells.map((c, i) => ` ${pad(c, widths[i]!, align[i] ?? 'l')} `).join('|')}|\n`;
  let out = rule + line(headers) + rule;
  for (const row of rows) {
    const cells = headers.map((_, i) => split(row[i] ?? ''));
    const height = Math.max(1, ...cells.map((c) => c.length));
    for (let k = 0; k < height; k++) out += line(cells.map((c) => c[k] ?? ''));
  }
  return out + rule;
}

function pad(text: string, width: number, align: Align): string {
  const fill = ' '.repeat(Math.max(0, width - displayWidth(text)));
  return align === 'r' ? fill + text : text + fill;
}

/** Terminal columns a string takes: combining marks take none, East Asian wide characters two. */
export function displayWidth(text: string): number {
  let w = 0;
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (/\p{Mn}|\p{Me}|\p{Cf}/u.test(ch)) continue;
    w += isWide(c) ? 2 : 1;
  }
  return w;
}

function isWide(c: number): boolean {
  return (
    (c >= 0x1100 && c <= 0x115f) ||
    (c >= 0x2e80 && c <= 0xa4cf && c !== 0x303f) ||
    (c >= 0xac00 && c <= 0xd7a3) ||
    (c >= 0xf900 && c <= 0xfaff) ||
    (c >= 0xfe30 && c <= 0xfe4f) ||
    (c >= 0xff00 && c <= 0xff60) ||
    (c >= 0xffe0 && c <= 0xffe6) ||
    (c >= 0x1f300 && c <= 0x1faff) ||
    (c >= 0x20000 && c <= 0x3fffd)
  );
}
