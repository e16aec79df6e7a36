//! Integration tests of conveyor-api: the committed TypeScript is current.

mod bindings;
