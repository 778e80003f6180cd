// Subsystems owned by other folders that the MCP front wires when they are present. A tool whose
// subsystem is absent is not registered at all (no stubs), so tools/list never lies.

// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface OptionalServices {}
