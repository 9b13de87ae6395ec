// Errors for bad input data, each naming the file and line it is about. They live apart from the code
// that throws them so workflows can list them as non-retryable (contracts/errors.ts) without pulling
// file IO into the workflow bundle.

/** A bad JSONL line. `torn` marks an unterminated, unparseable last line: a write cut short by a crash. */
export class JsonlError extends Error {
  readonly file: string;
  readonly line: number;
  readonly reason: string;
  readonly torn: boolean;

  constructor(file: string, line: number, reason: string, torn = false) {
    super(`${file}:${line}: ${reason}`);
    this.name = 'JsonlError';
    this.file = file;
    this.line = line;
    this.reason = reason;
    this.torn = torn;
  }
}

/** Bad input that stops a conversion: the message names the file, the line and what was wrong. */
export class ConvertInputError extends Error {
  constructor(file: string, line: number | null, reason: string) {
    super(line === null ? `${file}: ${reason}` : `${file}:${line}: ${reason}`);
    this.name = 'ConvertInputError';
  }
}

export class PublishInputError extends Error {
  constructor(file: string, line: number | null, reason: string) {
    super(line === null ? `${file}: ${reason}` : `${file}:${line}: ${reason}`);
    this.name = 'PublishInputError';
  }
}

/** A profiling input that cannot be profiled; non-retryable by nature. */
export class RewardProfileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RewardProfileError';
  }
}
