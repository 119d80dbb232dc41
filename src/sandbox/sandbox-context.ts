import type { Logger } from 'pino';
import type { ApiKeyRegistry } from './api-keys.js';
import type { EventDispatcher } from './event-dispatcher.js';
import type { FaultInjector } from './faults.js';
import type { FixedWindowRateLimiter } from './rate-limiter.js';
import type { ReportStore } from './report-store.js';
import type { AnswerTally, ReadTally, RequestCounter } from './request-counter.js';
import type { SubmissionStore } from './submission-store.js';

export type SandboxLogger = Pick<Logger, 'info' | 'warn' | 'error'>;

/** The sandbox's state, shared by its HTTP routes and its programmatic helpers. */
export interface SandboxContext {
  store: ReportStore;
  keys: ApiKeyRegistry;
  limiter: FixedWindowRateLimiter;
  /** The per-second throttle (`ratePerSecond` fault). */
  burstLimiter: FixedWindowRateLimiter;
  faults: FaultInjector;
  requests: RequestCounter;
  reads: ReadTally;
  /** Answered searches (200) per query, as `reads` per slug. */
  searches: ReadTally;
  answers: AnswerTally;
  events: EventDispatcher;
  submissions: SubmissionStore;
  /** The sandbox-wide limit per key per minute; a fault-injected limit replaces it, a key's own limit beats both. */
  rateLimitPerMinute: number;
  logger?: SandboxLogger;
}
