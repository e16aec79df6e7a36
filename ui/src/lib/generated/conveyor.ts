// The daemon's wire types, generated from crates/conveyor-api by ts-rs into
// crates/conveyor-api/bindings/conveyor.ts (`UPDATE_BINDINGS=1 cargo test -p conveyor-api`).
// One generated file, re-exported here so the pages import it like the app's own types.
export type * from '../../../../crates/conveyor-api/bindings/conveyor';
