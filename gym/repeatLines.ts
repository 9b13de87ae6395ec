import { randomUUID } from 'node:crypto';
import { jsonText } from './jsonl';
import { dictGet, dictSet, shallowCopyDict, type JsonDict } from './kindedJson';

// The repeats of a task row differ in `_ng_rollout_index` and, with a seed per repeat, in
// `responses_create_params.metadata.extra_body`, nowhere else. Serializing each repeat whole (orjson's
// bytes, about half of materializing's CPU) does the same work num_repeats times; so a row is
// serialized once, with a marker in each of those places, and each repeat's line is the text around
// the markers with the repeat's own values in between.

/**
 * Unique to this process and made of characters no JSON writer escapes, so its quoted text in a
 * serialized row can only be where it was put. A row that holds it anyway (it would have to contain
 * this process's random id) is not split: its repeats are serialized whole.
 */
export const REPEAT_MARKER = `pivot-miner-repeat-${randomUUID()}`;
const INDEX_MARK = `${REPEAT_MARKER}-rollout-index`;
const EXTRA_BODY_MARK = `${REPEAT_MARKER}-extra-body`;

type Slot = 'rolloutIndex' | 'extraBody';

/** The line text of each repeat of one task row. */
export class RepeatLines {
  private constructor(
    /** The text before, between and after the slots. */
    private readonly pieces: readonly string[],
    private readonly slots: readonly Slot[],
  ) {}

  /**
   * From any repeat of the row (of the kind it is written as). undefined when the marked text does
   * not hold each marker exactly once, and the repeats must be serialized whole.
   */
  static of(repeat: JsonDict, seedPerRepeat: boolean): RepeatLines | undefined {
    const marked = shallowCopyDict(repeat);
    dictSet(marked, '_ng_rollout_index', INDEX_MARK);
    if (seedPerRepeat) {
      // Copies on the way down, since the repeats share what is below their own top level.
      const params = shallowCopyDict(dictGet(marked, 'responses_create_params') as JsonDict);
      const metadata = shallowCopyDict(dictGet(params, 'metadata') as JsonDict);
      dictSet(metadata, 'extra_body', EXTRA_BODY_MARK);
      dictSet(params, 'metadata', metadata);
      dictSet(marked, 'responses_create_params', params);
    }
    const text = jsonText(marked);
    const marks: Array<[string, Slot]> = [[INDEX_MARK, 'rolloutIndex']];
    if (seedPerRepeat) marks.push([EXTRA_BODY_MARK, 'extraBody']);
    const found: Array<{ at: number; length: number; slot: Slot }> = [];
    for (const [mark, slot] of marks) {
      const quoted = `"${mark}"`;
      const at = text.indexOf(quoted);
      if (at === -1 || text.indexOf(quoted, at + 1) !== -1) return undefined;
      found.push({ at, length: quoted.length, slot });
    }
    found.sort((a, b) => a.at - b.at);
    const pieces: string[] = [];
    let from = 0;
    for (const { at, length } of found) {
      pieces.push(text.slice(from, at));
      from = at + length;
    }
    pieces.push(text.slice(from));
    return new RepeatLines(
      pieces,
      found.map((f) => f.slot),
    );
  }

  /**
   * The line of the repeat with these values, as `jsonText` writes it. An integer's text is its
   * digits in both of jsonText's writers; `extra_body` is Python's `json.dumps` output, printable
   * ASCII, which both escape alike (JSON.stringify and orjson part only on lone surrogates).
   */
  line(rolloutIndex: number, extraBody: string | undefined): string {
    let text = this.pieces[0]!;
    for (let i = 0; i < this.slots.length; i++) {
      text += this.slots[i] === 'rolloutIndex' ? String(rolloutIndex) : JSON.stringify(extraBody);
      text += this.pieces[i + 1]!;
    }
    return text;
  }
}
