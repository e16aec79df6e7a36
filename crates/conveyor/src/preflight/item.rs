//! An item of the preflight as each check makes it: what it checks, how bad it is, what it
//! saw, and the fix; daemon-wide unless said to be of a project.

use conveyor_api::{
    PreflightCode as Code, PreflightItem, PreflightLevel as Level, PreflightScope as Scope,
};

use crate::store::ProjectRow;

pub(super) fn ok(code: Code, message: String) -> PreflightItem {
    item(code, Level::Ok, message, None)
}

pub(super) fn item(
    code: Code,
    level: Level,
    message: String,
    fix: Option<String>,
) -> PreflightItem {
    PreflightItem {
        code,
        level,
        scope: Scope::Daemon,
        project_id: None,
        message,
        fix,
    }
}

pub(super) fn for_project(mut i: PreflightItem, project: &ProjectRow) -> PreflightItem {
    i.scope = Scope::Project;
    i.project_id = Some(project.id.clone());
    i
}
