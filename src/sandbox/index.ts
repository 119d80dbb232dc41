export { defaultFixturesPath, findProjectRoot } from '../util/project-root.js';
export type { ApiKey, KeyRegistration } from './api-keys.js';
export type { Delivery, DeliveryStatus, SandboxEvent } from './event-dispatcher.js';
export type { FaultSettings } from './faults.js';
export {
  FixtureFileError,
  type FixtureReport,
  loadFixtureReports,
  type PublicReport,
  parseFixtureReports,
} from './fixtures.js';
export { SandboxHttpError } from './http-error.js';
export {
  createSandbox,
  type ListeningSandbox,
  ReportSandbox,
  type SandboxOptions,
} from './report-sandbox.js';
export type { ReportUpdate } from './report-updates.js';
export type { AnswerCounts, RequestFilter } from './request-counter.js';
export type { SandboxLogger } from './sandbox-context.js';
export { BUILT_IN_KEYS, DEFAULT_PORT, DEFAULT_RATE_LIMIT_PER_MINUTE, ROUTES } from './sandbox-facts.js';
export type { SubmissionPublication } from './submission-publication.js';
export type { Submission, SubmissionDocument } from './submission-store.js';
export { WebhookSecretError } from './webhook-signing.js';
