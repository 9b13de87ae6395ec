// The parts of the WebAssembly global that this project uses. Node 20 has all of it, but its type
// definitions (@types/node 20) leave it to TypeScript's DOM library, which a Node project does not
// load.
declare namespace WebAssembly {
  class Module {
    constructor(bytes: BufferSource);
  }
  class Memory {
    constructor(descriptor: { initial: number; maximum?: number });
    readonly buffer: ArrayBuffer;
    grow(delta: number): number;
  }
  class Instance {
    constructor(module: Module, imports?: Record<string, Record<string, unknown>>);
    readonly exports: Record<string, unknown>;
  }
}
