/** Columns padded to their widest cell: the first left-aligned, the rest right-aligned. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) =>
        column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart((widths[column] ?? 0) + 2),
      )
      .join('')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}
