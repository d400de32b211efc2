import type { WriteOp } from '../../store/index.ts';
import { newId } from './ids.ts';
import type { Repos } from './repos.ts';

/** Bytes per stored chunk. */
const CHUNK = 256 * 1024;

/** A stored byte string: `chunks` rows named `<id>.<n>` in a project. */
export interface BlobRef {
  id: string;
  chunks: number;
}

/**
 * Binary data (image files, Swift objects) kept in the store as base64 chunks, so the embedded
 * cloud's state lives in one place and survives restarts with everything else.
 */
export class Blobs {
  constructor(private readonly repos: Repos) {}

  /** The writes that store `data` in `project`; commit them with the row that references the blob. */
  writeOps(project: string, data: Buffer): { ref: BlobRef; ops: WriteOp[] } {
    const id = newId();
    const ops: WriteOp[] = [];
    let n = 0;
    for (let off = 0; off < data.length || n === 0; off += CHUNK) {
      ops.push(
        this.repos.blobChunks.createOp(
          project,
          `${id}.${n}`,
          { data: data.subarray(off, off + CHUNK).toString('base64') },
          { uid: null, labels: { blob: id } },
        ),
      );
      n++;
      if (data.length === 0) break;
    }
    return { ref: { id, chunks: n }, ops };
  }

  async read(project: string, ref: BlobRef): Promise<Buffer> {
    const parts: Buffer[] = [];
    for (let i = 0; i < ref.chunks; i++) {
      const row = await this.repos.blobChunks.get(project, `${ref.id}.${i}`);
      if (row) parts.push(Buffer.from(row.rec.data, 'base64'));
    }
    return Buffer.concat(parts);
  }

  /** The writes that delete a blob. */
  async deleteOps(project: string, ref: BlobRef): Promise<WriteOp[]> {
    const ops: WriteOp[] = [];
    for (let i = 0; i < ref.chunks; i++) {
      const row = await this.repos.blobChunks.get(project, `${ref.id}.${i}`);
      if (row) ops.push(this.repos.blobChunks.deleteOp(row));
    }
    return ops;
  }
}
