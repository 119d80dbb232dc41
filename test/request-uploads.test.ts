import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { crc32 } from 'node:zlib';
import express, { type NextFunction, type Request, type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminRequestError } from '../src/admin/errors.js';
import { readMultipartBody, readUploadForm } from '../src/admin/uploads.js';
import { MAX_REQUEST_DOCUMENT_BYTES } from '../src/app/report-requests.js';
import { ReportClient } from '../src/reports/client.js';
import { MAX_DOCUMENT_FILENAME_LENGTH, safeFilename } from '../src/reports/document-types.js';

/**
 * Issue 26, point 11: a request's document through the admin upload reader. Only allowed types pass, judged on
 * the bytes; the filename is rebuilt from a safe character set; an empty file is a 400; and a 10 MB document
 * costs at most twice its size while it is read and sent on to the report service.
 */

setFlagsFromString('--expose-gc');
/** V8's collector, so a memory reading counts what is held, not garbage not yet collected. */
const collect = runInNewContext('gc') as () => void;
const heldBuffers = () => {
  collect();
  return process.memoryUsage().arrayBuffers;
};

/** What the report service stand-in saw: bytes of each upload, and memory readings taken meanwhile. */
const service = { received: 0, readings: [] as number[] };
let serviceServer: Server;
let uploadServer: Server;
let uploadPort = 0;

/** The upload reader in front of a route that answers what it read and sends the document on. */
function uploadApp(serviceUrl: string) {
  const client = new ReportClient({
    baseUrl: serviceUrl,
    apiKey: 'sk_upload_test',
    sleep: async () => {},
    random: () => 0.5,
  });
  const app = express();
  app.post('/upload', readMultipartBody, async (req, res, next) => {
    try {
      const { file } = await readUploadForm(req, 'document');
      if (file && req.query.send === '1') {
        service.readings.push(heldBuffers());
        await client.uploadDocument('sub_1', file);
      }
      res.json({
        file: file && { filename: file.filename, contentType: file.contentType, size: file.bytes.byteLength },
      });
    } catch (err) {
      next(err);
    }
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof AdminRequestError) res.status(err.status).json({ code: err.code, error: err.message });
    else res.status(500).json({ error: String(err) });
  });
  return app;
}

beforeAll(async () => {
  serviceServer = createServer((req, res) => {
    let seen = 0;
    let measured = false;
    req.on('data', (chunk: Buffer) => {
      seen += chunk.byteLength;
      if (!measured && seen >= MAX_REQUEST_DOCUMENT_BYTES / 2) {
        measured = true;
        service.readings.push(heldBuffers());
      }
    });
    req.on('end', () => {
      service.received = seen;
      res.writeHead(201, { 'content-type': 'application/json' }).end('{"id":"doc_1"}');
    });
  });
  await new Promise<void>((r) => serviceServer.listen(0, '127.0.0.1', r));
  const servicePort = (serviceServer.address() as AddressInfo).port;
  uploadServer = createServer(uploadApp(`http://127.0.0.1:${servicePort}/api`));
  await new Promise<void>((r) => uploadServer.listen(0, '127.0.0.1', r));
  uploadPort = (uploadServer.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const server of [uploadServer, serviceServer]) {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  }
});

const BOUNDARY = '----upload-test-boundary';

/** A multipart body with one `document` part, built as one buffer so sending it copies nothing more. */
function multipart(filename: string, bytes: Uint8Array, type = 'application/octet-stream'): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="document"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`,
    ),
    bytes,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

/** Posts `body` in 64 KB views of it (node:http, so the client side makes no copy of its own). */
function post(body: Buffer, query = ''): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: uploadPort,
        method: 'POST',
        path: `/upload${query}`,
        headers: {
          'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
          'content-length': body.byteLength,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    const write = (offset: number): void => {
      while (offset < body.byteLength) {
        const end = Math.min(offset + 64 * 1024, body.byteLength);
        const more = req.write(body.subarray(offset, end));
        offset = end;
        if (!more) {
          req.once('drain', () => write(offset));
          return;
        }
      }
      req.end();
    };
    write(0);
  });
}

/**
 * Writes an entry's CRC-32, sizes (stored, so compressed and uncompressed are the same) and name length, which
 * a zip's local header holds from offset 14 and its central directory header from offset 16.
 */
function writeEntrySizes(header: Buffer, at: number, crc: number, size: number, nameLength: number): void {
  header.writeUInt32LE(crc, at);
  header.writeUInt32LE(size, at + 4);
  header.writeUInt32LE(size, at + 8);
  header.writeUInt16LE(nameLength, at + 12);
}

/** A zip with stored (uncompressed) entries, enough for an OOXML document's type to be read. */
function storedZip(entries: [string, string][]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of entries) {
    const nameBytes = Buffer.from(name);
    const data = Buffer.from(text);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    writeEntrySizes(local, 14, crc, data.length, nameBytes.length);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    writeEntrySizes(central, 16, crc, data.length, nameBytes.length);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const PDF = Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(64, 1)]);
const DOCX = storedZip([
  [
    '[Content_Types].xml',
    '<?xml version="1.0"?><Types><Override ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
  ],
  ['word/document.xml', '<w:document/>'],
]);
const CFB = Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(4088)]);
const EXE = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(510)]);

describe('document types are judged on the bytes', () => {
  it.each([
    ['annual-report.pdf', PDF, 'application/pdf', 'annual-report.pdf'],
    ['scan.png', PNG, 'image/png', 'scan.png'],
    [
      'plan.docx',
      DOCX,
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'plan.docx',
    ],
    ['old-plan.doc', CFB, 'application/msword', 'old-plan.doc'],
    ['profile.txt', Buffer.from('Brackwater makes tide gauges.\nSince 1971.\n'), 'text/plain', 'profile.txt'],
    // The type the bytes show wins over the name and the type the client claimed.
    ['photo.pdf', PNG, 'image/png', 'photo.png'],
  ])('%s passes as what it is', async (name, bytes, type, sentName) => {
    const answer = await post(multipart(name, bytes, 'application/x-claimed'));
    expect(answer.status).toBe(200);
    expect(answer.json.file).toEqual({ filename: sentName, contentType: type, size: bytes.byteLength });
  });

  it.each([
    ['setup.pdf', EXE],
    ['bundle.zip', storedZip([['evil.exe', 'MZ']])],
    ['installer.msi', CFB],
    ['binary.txt', Buffer.from([0x41, 0x00, 0x42, 0x07, 0x43])],
    ['page.xml', Buffer.from('<?xml version="1.0"?><a/>')],
  ])('%s is refused with 400', async (name, bytes) => {
    const answer = await post(multipart(name, bytes));
    expect(answer.status).toBe(400);
    expect(answer.json.code).toBe('DOCUMENT_TYPE_REFUSED');
  });
});

describe('filenames', () => {
  it('are reduced to a safe character set and length, with the type found', async () => {
    const answer = await post(multipart('../../../etc/passwd.exe', PDF));
    expect(answer.json.file).toMatchObject({ filename: 'passwd.pdf', contentType: 'application/pdf' });
    expect(safeFilename('C:\\Users\\a\\Geschäftsbericht 2025 (final).PDF', 'pdf')).toBe(
      'Geschaftsbericht_2025_final.pdf',
    );
    expect(safeFilename('"; rm -rf /\r\n.pdf', 'pdf')).toBe('document.pdf');
    expect(safeFilename('..', 'txt')).toBe('document.txt');
    expect(safeFilename('.htaccess', 'txt')).toBe('document.txt');
    const long = safeFilename(`${'a'.repeat(500)}.pdf`, 'pdf');
    expect(long).toHaveLength(MAX_DOCUMENT_FILENAME_LENGTH);
    expect(long.endsWith('.pdf')).toBe(true);
  });
});

describe('empty and oversized files', () => {
  it('an empty chosen file is refused with 400', async () => {
    const answer = await post(multipart('empty.pdf', new Uint8Array()));
    expect(answer.status).toBe(400);
    expect(answer.json.code).toBe('DOCUMENT_EMPTY');
  });

  it('a form where no file was chosen (an empty, unnamed part) carries no document', async () => {
    const answer = await post(multipart('', new Uint8Array()));
    expect(answer).toEqual({ status: 200, json: { file: null } });
  });

  it('a file over 10 MB is refused with 400', async () => {
    const bytes = Buffer.alloc(MAX_REQUEST_DOCUMENT_BYTES + 1, 0x61);
    const answer = await post(multipart('big.txt', bytes));
    expect(answer.status).toBe(400);
    expect(answer.json.code).toBe('DOCUMENT_TOO_LARGE');
  });
});

describe('memory', () => {
  it('a 10 MB document read and sent on holds at most twice its size', async () => {
    const size = MAX_REQUEST_DOCUMENT_BYTES;
    const document = Buffer.alloc(size, 0x61);
    PDF.copy(document);
    const body = multipart('big.pdf', document);
    service.readings.length = 0;
    const before = heldBuffers();
    const answer = await post(body, '?send=1');
    expect(answer.status).toBe(200);
    expect(answer.json.file).toMatchObject({ size });
    expect(service.received).toBeGreaterThan(size);
    // One reading once the route holds the document, one while the service is receiving it.
    expect(service.readings).toHaveLength(2);
    const peak = Math.max(...service.readings) - before;
    // The service stand-in runs in this process: the chunk its socket is reading (at most its 64 KiB
    // high-water mark) is counted too, though it is not the connector's. Without this slack the reading
    // came out a few kilobytes over 2x on some runs (20,976,375 for 20,971,520).
    const standInChunk = 64 * 1024;
    expect(peak).toBeLessThanOrEqual(2 * size + standInChunk);
  });
});
