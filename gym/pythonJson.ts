// The one JSON decoder with the semantics of CPython's `json.loads` (the C scanner, default
// arguments). NeMo Gym decodes tool-call arguments and dataset lines with it, and both the
// verifier's verdicts and the validator's messages depend on what it accepts, on the Python type
// each lexeme becomes and on where it reports an error. `JSON.parse` differs on every one of those
// points: it rejects NaN/Infinity, loses integers beyond 2^53, cannot tell `1.0` from `1`,
// reorders integer-like object keys and counts positions in UTF-16 units.
import { Scanner } from './pythonJsonScanner';
import { PythonJsonFailure, type PyValue } from './pythonJsonValue';

export { PythonJsonDecodeError } from './pythonJsonError';
export { isPyDict, MAX_NESTING_DEPTH, PythonJsonFailure, type PyDict, type PyValue } from './pythonJsonValue';

/** `json.loads(text)`, or the failure CPython would raise as a value (cheap: no exception object). */
export function decodePythonJson(text: string): PyValue | PythonJsonFailure {
  try {
    return new Scanner(text).decode();
  } catch (error) {
    if (error instanceof PythonJsonFailure) return error;
    throw error;
  }
}

/** `json.loads(text)`; throws PythonJsonDecodeError with Python's message and position. */
export function loadsPythonJson(text: string): PyValue {
  const result = decodePythonJson(text);
  if (result instanceof PythonJsonFailure) throw result.toError();
  return result;
}
