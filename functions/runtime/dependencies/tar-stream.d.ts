/** The part of tar-stream 2.x (untyped) that tree-archive.ts uses. */
declare module 'tar-stream' {
  import type { Readable, Writable } from 'node:stream';

  export interface Headers {
    name: string;
    mode?: number;
    size?: number;
    type?: 'file' | 'directory' | 'symlink' | string;
    linkname?: string;
  }

  export interface Pack extends Readable {
    entry(header: Headers, buffer: Buffer | string, callback: (error?: Error | null) => void): void;
    entry(header: Headers, callback: (error?: Error | null) => void): void;
    finalize(): void;
  }

  export interface Extract extends Writable {
    on(event: 'entry', listener: (header: Headers, stream: Readable, next: (error?: Error) => void) => void): this;
    on(event: 'finish', listener: () => void): this;
    on(event: 'error', listener: (error: Error) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  export function pack(): Pack;
  export function extract(): Extract;
}
