import { parseCsv, writeCsv } from './csv.js';
import { formatDateTime, type LocalOrg, SalesforceApiError } from './org.js';

/**
 * Bulk API 2.0 ingest jobs (`update` only). A closed job's rows are applied when it completes (at the check
 * that finds it done, or `finishPending`), so an aborted job never applies. Test tool only.
 */

interface Job {
  id: string;
  object: string;
  operation: string;
  createdById: string;
  /** The `changeOrigin` of the job's writes: the call options of the request that created it. */
  origin: string;
  createdAt: number;
  state: 'Open' | 'UploadComplete' | 'InProgress' | 'JobComplete' | 'Failed' | 'Aborted';
  csv: string | null;
  checksLeft: number;
  errorMessage?: string;
  header: string[];
  succeeded: string[][];
  failed: string[][];
  unprocessed: string[][];
}

export class BulkJobs {
  private readonly jobs = new Map<string, Job>();

  constructor(private readonly org: LocalOrg) {}

  create(userId: string, origin: string, body: { object?: unknown; operation?: unknown }): Job {
    if (body.object !== 'Account') {
      throw new SalesforceApiError(
        400,
        'INVALIDJOB',
        `the local Salesforce only ingests Account, not ${String(body.object)}`,
      );
    }
    if (body.operation !== 'update') {
      throw new SalesforceApiError(
        400,
        'INVALIDJOB',
        `the local Salesforce only runs update jobs, not ${String(body.operation)}`,
      );
    }
    const job: Job = {
      id: this.org.newBulkJobId(),
      object: 'Account',
      operation: 'update',
      createdById: userId,
      origin,
      createdAt: this.org.now(),
      state: 'Open',
      csv: null,
      checksLeft: this.org.options.bulkChecksBeforeComplete,
      header: [],
      succeeded: [],
      failed: [],
      unprocessed: [],
    };
    this.jobs.set(job.id, job);
    return job;
  }

  get(id: string): Job {
    const job = this.jobs.get(id);
    if (!job) throw new SalesforceApiError(404, 'NOT_FOUND', `Job ${id} does not exist`);
    return job;
  }

  upload(id: string, csv: string): void {
    const job = this.get(id);
    if (job.state !== 'Open')
      throw new SalesforceApiError(409, 'INVALIDJOBSTATE', `Job ${id} is not open for data`);
    if (job.csv !== null) throw new SalesforceApiError(409, 'INVALIDJOBSTATE', `Job ${id} already has data`);
    job.csv = csv;
  }

  setState(id: string, state: unknown): Job {
    const job = this.get(id);
    if (state === 'Aborted') {
      if (job.state === 'JobComplete' || job.state === 'Failed') {
        throw new SalesforceApiError(
          409,
          'INVALIDJOBSTATE',
          `Job ${id} is ${job.state} and cannot be aborted`,
        );
      }
      job.state = 'Aborted';
      return job;
    }
    if (state !== 'UploadComplete' || job.state !== 'Open') {
      throw new SalesforceApiError(
        409,
        'INVALIDJOBSTATE',
        `Job ${id} cannot move from ${job.state} to ${String(state)}`,
      );
    }
    job.state = 'UploadComplete';
    return job;
  }

  /** Salesforce finishes every job still running (a test lets a job that outlived its client's wait apply). */
  finishPending(): void {
    for (const job of this.jobs.values()) {
      if (job.state === 'UploadComplete' || job.state === 'InProgress') this.complete(job);
    }
  }

  private complete(job: Job): void {
    this.process(job);
    job.state = job.errorMessage ? 'Failed' : 'JobComplete';
  }

  /** A check: the first few answer InProgress, so a client has to poll. */
  check(id: string): Job {
    const job = this.get(id);
    if ((job.state === 'UploadComplete' || job.state === 'InProgress') && job.checksLeft > 0) {
      job.checksLeft--;
      job.state = 'InProgress';
    } else if (job.state === 'UploadComplete' || job.state === 'InProgress') {
      this.complete(job);
    }
    return job;
  }

  private process(job: Job): void {
    const rows = parseCsv(job.csv ?? '');
    const header = rows.shift() ?? [];
    job.header = header;
    const idColumn = header.indexOf('Id');
    if (idColumn < 0) {
      job.errorMessage = 'InvalidBatch : Field name not found : Id';
      return;
    }
    try {
      this.org.checkFieldsExist(header.filter((h) => h !== 'Id'));
    } catch (err) {
      job.errorMessage = `InvalidBatch : Field name not found : ${(err as SalesforceApiError).fields[0] ?? ''}`;
      return;
    }
    for (const row of rows) {
      const fields: Record<string, unknown> = {};
      header.forEach((name, i) => {
        if (i === idColumn) return;
        const cell = row[i] ?? '';
        if (cell === '') return;
        if (cell === '#N/A') {
          fields[name] = null;
          return;
        }
        const def = this.org.customFields.get(name);
        fields[name] = def?.type === 'Number' ? Number(cell) : cell;
      });
      const id = row[idColumn] ?? '';
      const failure = this.org.updateAccount(job.createdById, id, fields, {
        injectFaults: true,
        origin: job.origin,
      });
      if (failure) {
        job.failed.push([
          '',
          `${failure.statusCode}:${failure.message}:${failure.fields.join(';') || '--'}`,
          ...row,
        ]);
      } else {
        job.succeeded.push([id, 'false', ...row]);
      }
    }
  }

  info(job: Job, version: string): Record<string, unknown> {
    return {
      id: job.id,
      operation: job.operation,
      object: job.object,
      createdById: job.createdById,
      createdDate: formatDateTime(job.createdAt),
      systemModstamp: formatDateTime(this.org.now()),
      state: job.state,
      concurrencyMode: 'Parallel',
      contentType: 'CSV',
      apiVersion: Number(version.slice(1)),
      lineEnding: 'LF',
      columnDelimiter: 'COMMA',
      numberRecordsProcessed: job.state === 'JobComplete' ? job.succeeded.length + job.failed.length : 0,
      numberRecordsFailed: job.state === 'JobComplete' ? job.failed.length : 0,
      ...(job.errorMessage && job.state === 'Failed' ? { errorMessage: job.errorMessage } : {}),
    };
  }

  results(id: string, kind: 'successfulResults' | 'failedResults' | 'unprocessedrecords'): string {
    const job = this.get(id);
    if (job.state !== 'JobComplete' && job.state !== 'Failed' && job.state !== 'Aborted') {
      throw new SalesforceApiError(409, 'INVALIDJOBSTATE', `Job ${id} has not finished`);
    }
    switch (kind) {
      case 'successfulResults':
        return writeCsv(['sf__Id', 'sf__Created', ...job.header], job.succeeded);
      case 'failedResults':
        return writeCsv(['sf__Id', 'sf__Error', ...job.header], job.failed);
      case 'unprocessedrecords':
        return writeCsv(job.header, job.unprocessed);
    }
  }

  delete(id: string): void {
    this.get(id);
    this.jobs.delete(id);
  }
}
