// Node names the syscall of a failed write or fsync on an open file ("ENOSPC: no space left on
// device, write") but not the file. On a full or failing disk that is the one thing an operator
// needs, so every writer of run artifacts passes its errors through here: the message gains the
// path, and `code`, `errno` and `syscall` stay for callers that test them (and for Temporal's
// retry, which keeps such failures retryable).

type ErrnoError = NodeJS.ErrnoException;

const isErrnoError = (err: unknown): err is ErrnoError =>
  err instanceof Error && typeof (err as ErrnoError).code === 'string';

/** `err` with `file` in its message, when it is an errno error that does not name it yet. */
export function namedFileError(err: unknown, file: string): Error {
  if (!(err instanceof Error)) return new Error(`${file}: ${String(err)}`);
  if (!isErrnoError(err) || err.message.includes(file)) return err;
  const named: ErrnoError = new Error(`${file}: ${err.message}`, { cause: err });
  named.code = err.code;
  named.errno = err.errno;
  named.syscall = err.syscall;
  named.path = file;
  return named;
}

/** Runs a file operation, naming `file` in any errno error it throws. */
export async function onFile<T>(file: string, operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    throw namedFileError(err, file);
  }
}
