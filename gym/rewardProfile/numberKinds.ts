// Which numbers of a rollout line are Python ints and which floats, read from the line's text: at
// the top level and in `response.usage`, the only places reward profiling takes numbers from.
// Everything else (the trajectory, most of the line) is skipped over without being decoded, where
// decoding the whole line with Python's types cost a sixth of the profile's time.

export type Kind = 'int' | 'float';

export interface LineKinds {
  top: Map<string, Kind>;
  usage: Map<string, Kind>;
}

const SCALAR = /[^,}\]\s]+/y;

class Scanner {
  constructor(
    private readonly text: string,
    public at = 0,
  ) {}

  private fail(): never {
    throw new Error(`malformed JSON at offset ${this.at}`);
  }

  space(): void {
    for (
      let c = this.text.charCodeAt(this.at);
      c === 32 || c === 9 || c === 10 || c === 13;
      c = this.text.charCodeAt(++this.at)
    );
  }

  peek(): string {
    this.space();
    return this.text[this.at] ?? this.fail();
  }

  expect(c: string): void {
    if (this.peek() !== c) this.fail();
    this.at++;
  }

  /** A string at the cursor: its closing quote is the first one not escaped by an odd run of backslashes. */
  skipString(): void {
    let end = this.at;
    for (;;) {
      end = this.text.indexOf('"', end + 1);
      if (end < 0) this.fail();
      let slashes = 0;
      while (this.text.charCodeAt(end - 1 - slashes) === 92) slashes++;
      if (slashes % 2 === 0) break;
    }
    this.at = end + 1;
  }

  string(): string {
    const start = this.at;
    this.skipString();
    const raw = this.text.slice(start, this.at);
    return raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  }

  /** A number, literal or string value's kind (undefined when it is not a number or bool). */
  scalarKind(): Kind | undefined {
    if (this.peek() === '"') {
      this.skipString();
      return undefined;
    }
    SCALAR.lastIndex = this.at;
    const token = (SCALAR.exec(this.text) ?? this.fail())[0];
    this.at = SCALAR.lastIndex;
    if (token === 'true' || token === 'false') return 'int';
    if (token === 'null') return undefined;
    return /[.eE]/.test(token) ? 'float' : 'int';
  }

  /** Skips an object or array, strings included, without decoding it. */
  skipContainer(): void {
    const text = this.text;
    let depth = 0;
    for (let i = this.at; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        this.at = i;
        this.skipString();
        i = this.at - 1;
      } else if (c === 123 || c === 91) depth++;
      else if ((c === 125 || c === 93) && --depth === 0) {
        this.at = i + 1;
        return;
      }
    }
    this.fail();
  }

  /** Walks an object, handing each key to `visit`, which consumes the value. */
  object(visit: (key: string) => void): void {
    this.expect('{');
    if (this.peek() === '}') {
      this.at++;
      return;
    }
    for (;;) {
      if (this.peek() !== '"') this.fail();
      const key = this.string();
      this.expect(':');
      visit(key);
      if (this.peek() === '}') {
        this.at++;
        return;
      }
      this.expect(',');
    }
  }

  /** The kinds of an object's number values, skipping (or handing to `nested`) the others. */
  kinds(nested: (key: string) => boolean = () => false): Map<string, Kind> {
    const kinds = new Map<string, Kind>();
    this.object((key) => {
      const c = this.peek();
      if (c === '{' || c === '[') {
        kinds.delete(key);
        if (c !== '{' || !nested(key)) this.skipContainer();
        return;
      }
      const kind = this.scalarKind();
      if (kind) kinds.set(key, kind);
      else kinds.delete(key);
    });
    return kinds;
  }
}

/** The kinds of a rollout line's top-level and `response.usage` numbers (bools count as ints). */
export function lineKinds(text: string): LineKinds {
  const scanner = new Scanner(text);
  let usage = new Map<string, Kind>();
  const usageIn = (key: string) => {
    if (key !== 'usage') return false;
    usage = scanner.kinds();
    return true;
  };
  const top = scanner.kinds((key) => {
    if (key !== 'response') return false;
    usage = new Map();
    scanner.kinds(usageIn);
    return true;
  });
  return { top, usage };
}
