// POST /api/v1/attachments (contract section 16): the file streams into the attachment spool, then the upload operation
// stores it. The signed download URLs are served beside the route table (src/attachment-http.ts), to stream both ways.
import type { Route } from '../route.js';

export const attachmentRoutes: Route[] = [
  {
    method: 'POST', path: '/api/v1/attachments', family: 'v1', tag: 'attachments', status: 201, bodyFormat: 'spool', spoolInto: 'attachments',
    requireBeforeBody: 'user',
    summary: 'Upload a file (multipart "file", streamed, up to ATTACHMENT_MAX_BYTES, default 100 MiB; users only); name its id in an attachment field of a record write',
    document: 'mutation UploadAttachment($upload: String!, $fileName: String!, $sha256: String!, $mimeType: String) { uploadAttachment(upload: $upload, fileName: $fileName, sha256: $sha256, mimeType: $mimeType) { id name size mimeType } }',
    variables: ({ body: b }) => ({ upload: b.upload, fileName: b.fileName, sha256: b.sha256, mimeType: b.mimeType }),
    result: (d) => ({ id: d.uploadAttachment.id, name: d.uploadAttachment.name, size: d.uploadAttachment.size, mime_type: d.uploadAttachment.mimeType }),
    response: {
      type: 'object', required: ['id', 'name', 'size', 'mime_type'],
      properties: { id: { type: 'string' }, name: { type: 'string' }, size: { type: 'integer' }, mime_type: { type: 'string' } },
    },
  },
];
