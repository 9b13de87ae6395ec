/** The first line where a committed generated file and its regeneration differ, as a message a
 * person can act on; undefined when they are the same. */
export function staleDocMessage(file: string, committed: string, generated: string): string | undefined {
  if (committed === generated) return undefined;
  const a = committed.split('\n');
  const b = generated.split('\n');
  const line = a.findIndex((text, i) => text !== b[i]);
  const at = line === -1 ? a.length : line;
  return `${file}:${at + 1} is stale; run npm run schemas\n  committed: ${a[at] ?? '(end of file)'}\n  generated: ${b[at] ?? '(end of file)'}`;
}
