import { isUtf8 } from 'node:buffer';
import { fileTypeFromBuffer } from 'file-type';
import type { DocumentInput } from './submissions.js';

/**
 * Which documents may go to the report service with a request, judged on their bytes (the client's name and
 * type are not believed): PDF, office documents (OOXML, and the older OLE compound files of Word, Excel and
 * PowerPoint), PNG, JPEG, GIF and WebP images, and plain UTF-8 text. The type sent on is the one found here,
 * and the filename is rebuilt from a safe character set with the found type's extension.
 */

/** The longest filename sent on, extension included. */
export const MAX_DOCUMENT_FILENAME_LENGTH = 100;

export type DocumentRefusal = 'DOCUMENT_EMPTY' | 'DOCUMENT_TYPE_REFUSED';

export class DocumentRefusedError extends Error {
  constructor(
    readonly code: DocumentRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'DocumentRefusedError';
  }
}

/** The sniffed types let through, by file-type's extension, with the type the service is told. */
const SNIFFED: Readonly<Record<string, string>> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  png: 'image/png',
  jpg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

/**
 * An OLE compound file says nothing on its face about what it holds (it is also the format of installers), so
 * it passes only under the name of one of the office formats that use it.
 */
const COMPOUND_OFFICE: Readonly<Record<string, string>> = {
  doc: 'application/msword',
  xls: 'application/vnd.ms-excel',
  ppt: 'application/vnd.ms-powerpoint',
};

/** Text keeps a text extension it was given; any other name becomes `.txt`. */
const TEXT: Readonly<Record<string, string>> = {
  txt: 'text/plain',
  csv: 'text/csv',
  md: 'text/markdown',
};

const ALLOWED_LIST = 'PDF, Word, Excel or PowerPoint, PNG, JPEG, GIF or WebP image, or plain text';

function extensionOf(filename: string): string {
  const match = /\.([A-Za-z0-9]{1,8})$/.exec(filename);
  return match?.[1]?.toLowerCase() ?? '';
}

/**
 * Plain text: valid UTF-8 without control characters other than tab, line breaks and form feed. Read in place:
 * no string is made of the document.
 */
function isPlainText(bytes: Uint8Array): boolean {
  if (!isUtf8(bytes)) return false;
  for (const byte of bytes) {
    if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c) return false;
    if (byte === 0x7f) return false;
  }
  return true;
}

/** What the bytes are, as `{ext, mime}` from the allow-list, or null when they are none of it. */
export async function allowedTypeOf(
  bytes: Uint8Array,
  filename: string,
): Promise<{ ext: string; mime: string } | null> {
  const found = await fileTypeFromBuffer(bytes);
  if (found) {
    const mime = SNIFFED[found.ext];
    if (mime) return { ext: found.ext, mime };
    if (found.ext === 'cfb') {
      const ext = extensionOf(filename);
      const office = COMPOUND_OFFICE[ext];
      return office ? { ext, mime: office } : null;
    }
    return null;
  }
  if (!isPlainText(bytes)) return null;
  const ext = extensionOf(filename);
  const text = TEXT[ext];
  return text ? { ext, mime: text } : { ext: 'txt', mime: 'text/plain' };
}

/**
 * A filename made only of ASCII letters, digits, `.`, `_` and `-`: any directory part dropped, accents folded,
 * everything else one `_`, no leading dot, at most MAX_DOCUMENT_FILENAME_LENGTH characters, ending in `.ext`.
 */
export function safeFilename(given: string, ext: string): string {
  const base = given.split(/[\\/]/).pop() ?? '';
  const stem = base
    .replace(/\.[^.]*$/, '')
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/([._-])[._-]+/g, '$1')
    .replace(/^[._-]+|[._-]+$/g, '')
    .slice(0, MAX_DOCUMENT_FILENAME_LENGTH - ext.length - 1)
    .replace(/[._-]+$/, '');
  return `${stem || 'document'}.${ext}`;
}

/**
 * The document as it may be sent on: refused when empty or not of an allowed type; otherwise with the type
 * its bytes show and a safe filename. The bytes are the caller's own (no copy).
 */
export async function checkedDocument(document: DocumentInput): Promise<DocumentInput> {
  if (document.bytes.byteLength === 0) {
    throw new DocumentRefusedError('DOCUMENT_EMPTY', 'The document is empty: choose a file with content.');
  }
  const type = await allowedTypeOf(document.bytes, document.filename);
  if (!type) {
    throw new DocumentRefusedError(
      'DOCUMENT_TYPE_REFUSED',
      `The document is not a type the report service is sent: attach a ${ALLOWED_LIST}.`,
    );
  }
  return {
    filename: safeFilename(document.filename, type.ext),
    contentType: type.mime,
    bytes: document.bytes,
  };
}
