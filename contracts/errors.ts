import { ConvertInputError, JsonlError, PublishInputError, RewardProfileError } from '../gym/errors';

// The typed failures of the pipeline. Temporal names an activity failure after the thrown error's
// class, so retrying is decided by class, never by reading messages: the classes below are bad
// input or bad config, which a retry cannot fix, and every other error (ENOENT, a reset socket, a bug)
// is retried with the stage's policy.

/** A pipeline config or workflow input that cannot be used as given. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** A workflow input, update argument or client request that fails its schema. */
export class InvalidInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidInputError';
  }
}

/** A dataset the project wrote that NeMo Gym's validator rejects: a bug to report, never to retry. */
export class InvalidDatasetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidDatasetError';
  }
}

/** A stage whose rollouts failed a health check, with health_check_stops_run on; its files are published. */
export class RolloutHealthError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RolloutHealthError';
  }
}

/** A collect stage with require_complete whose rollouts do not all complete; its files are published. */
export class IncompleteCollectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IncompleteCollectionError';
  }
}

/** The failure type of a run stopped by `collect.dispatch_budget_s` with rows left; the same run id resumes it. */
export const DISPATCH_BUDGET_SPENT = 'DispatchBudgetSpent';

/** Error types no activity retry can fix; passed as `nonRetryableErrorTypes` by every workflow. */
export const NON_RETRYABLE_ERROR_TYPES: string[] = [
  ConfigError,
  InvalidInputError,
  InvalidDatasetError,
  JsonlError,
  ConvertInputError,
  PublishInputError,
  RewardProfileError,
  RolloutHealthError,
  IncompleteCollectionError,
].map((errorClass) => errorClass.name);
