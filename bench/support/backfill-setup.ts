import type { BackfillServicesReady, ServiceStats, Verification } from '../children/backfill-services.js';
import type { MemoryPeak } from './measure.js';
import { siblingModule } from './rpc.js';

/**
 * What both ways of backfilling (the pipeline and the naive loop) share. Each runs in a fresh connector
 * process of its own (children/backfill-connector.ts) against a fresh services process
 * (children/backfill-services.ts), so neither inherits the other's memory or Redis state.
 */

export type BackfillWay = 'pipeline' | 'naive';

export interface BenchLimits {
  /** The local CRM's budget: at most `max` calls in any `intervalMs` (rolling, like HubSpot's). */
  crm: { max: number; intervalMs: number };
  /** What the connector paces CRM calls to (HubSpot's 100 of 110, scaled like the CRM's budget). */
  crmGate: { max: number; windowMs: number };
  /** The sandbox's limit per key per minute (fixed windows), and what the connector paces to. */
  reportsPerMinute: number;
}

/** The connector process's configuration, sent as JSON. */
export interface ConnectorSideConfig {
  way: BackfillWay;
  services: BackfillServicesReady;
  redisUrl: string;
  prefix: string;
  limits: BenchLimits;
  logLevel: string;
  /** Hard limit on the run itself. */
  timeoutMs: number;
}

/** What the connector process measures of its own run. */
export interface RunResult {
  records: number;
  /** From the moment work may start to the moment the last record is written. */
  elapsedMs: number;
  memory: MemoryPeak;
  /** Anything that makes the numbers less than clean (a stopped run, a time limit, records that failed). */
  notes: string[];
}

/** A backfill made ready (installation, fields, connections) and waiting to be started. */
export interface BackfillRunner {
  run(): Promise<RunResult>;
  close(): Promise<void>;
}

export interface BackfillMeasurement extends RunResult {
  way: BackfillWay;
  stats: ServiceStats;
  verification: Verification;
}

export const SERVICES_MODULE = siblingModule(import.meta.url, '../children/backfill-services');
export const CONNECTOR_MODULE = siblingModule(import.meta.url, '../children/backfill-connector');
