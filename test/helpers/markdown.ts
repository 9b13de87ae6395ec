import assert from 'node:assert/strict';

// The fenced code blocks of a Markdown page, for the tests that hold docs to what runs.

export interface FencedBlock {
  /** The info string after the opening fence (`yaml`, `bash`, ... or empty). */
  lang: string;
  /** 1-based line of the opening fence. */
  line: number;
  text: string;
  /** The last non-blank line before the opening fence (where a page marks a block for its test). */
  before: string | undefined;
}

export function fencedBlocks(file: string, markdown: string): FencedBlock[] {
  const lines = markdown.split('\n');
  const blocks: FencedBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)```(\S*)/.exec(lines[i]!);
    if (!fence) continue;
    const end = lines.findIndex((l, j) => j > i && l.trim() === '```');
    assert.ok(end > i, `${file}:${i + 1}: unclosed code block`);
    const before = lines
      .slice(0, i)
      .reverse()
      .find((l) => l.trim() !== '')
      ?.trim();
    blocks.push({ lang: fence[2]!, line: i + 1, text: lines.slice(i + 1, end).join('\n'), before });
    i = end;
  }
  return blocks;
}
