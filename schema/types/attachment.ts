// Attachment uploads (contract section 16): the operation stores a file the REST door streamed into the attachment spool.
import type { UserActor } from '../../src/domain/deps.js';
import { builder } from '../builder.js';

interface Uploaded { id: string; name: string; size: number; mimeType: string }

const Attachment = builder.objectRef<Uploaded>('UploadedAttachment').implement({
  description: 'A stored file, not yet in any record: name its id in an attachment field of a record write',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    size: t.exposeInt('size', { description: 'Bytes' }),
    mimeType: t.exposeString('mimeType', { description: 'From the bytes for images, else as the client sent it' }),
  }),
});

builder.mutationFields((t) => ({
  uploadAttachment: t.field({
    type: Attachment,
    description: 'Stores an uploaded file (users; thumbnails are made for images). Only the REST door (POST /api/v1/attachments) spools files',
    args: {
      upload: t.arg.string({ required: true, description: 'The id of the file the REST door spooled' }),
      fileName: t.arg.string({ required: true }),
      sha256: t.arg.string({ required: true, description: 'The hash of the bytes, as the spool computed it' }),
      mimeType: t.arg.string({ required: false, description: 'The type the client gave the file part' }),
    },
    authScopes: { loggedIn: true },
    resolve: (_r, a, ctx) => ctx.services.attachments.fromUpload((ctx.actor as UserActor).id, a.upload, { name: a.fileName, sha256: a.sha256, claimedType: a.mimeType }),
  }),
}));
