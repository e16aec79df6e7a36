//! The API's answers about itself: its health, and the body and stable code of every error.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

wire! {
    /// `GET /api/health`.
    pub struct Health {
        pub status: String,
        pub version: String,
    }
}

wire! {
    /// Every error response: a stable `code` to branch on and a human message.
    pub struct ApiErrorBody {
        pub code: ErrorCode,
        pub message: String,
    }
}

named! {
    /// The stable code of an error response: what a client branches on (the message is for
    /// people). Each code comes with one HTTP status.
    pub enum ErrorCode {
        /// 401: no bearer token, or a wrong one.
        Unauthorized = "unauthorized",
        /// 404: no such project, line or question.
        NotFound = "not_found",
        /// 400: the request is malformed or a value is refused (an empty name, a bad filter).
        BadRequest = "bad_request",
        /// 409: the line is not in a state that allows this (accept before it awaits
        /// acceptance, remarks on a finished line, cancel of a cancelled line).
        InvalidState = "invalid_state",
        /// 409: accept refused, the line's branch holds commits main lacks.
        UnmergedCommits = "unmerged_commits",
        /// 409: something by that name exists already (a project).
        Exists = "exists",
        /// 422: `repo_path` is not an absolute path to a git repository with the main branch.
        NotARepository = "not_a_repository",
        /// 422: the line names a project that does not exist.
        UnknownProject = "unknown_project",
        /// 422: the answer's `option` is not one of the question's options.
        NotAnOption = "not_an_option",
        /// 409: the `answer` step carrying the answer has started: it can no longer be changed
        /// or taken back.
        AnswerStarted = "answer_started",
        /// 409: a line's level only goes up (light → medium → full); the asked level is lower
        /// than the one it has.
        LevelLower = "level_lower",
        /// 409: the Catcher is not configured (`[catcher]` in the daemon's config).
        CatcherOff = "catcher_off",
        /// 422: `planfix_task` is not a PlanFix task number.
        BadPlanfixTask = "bad_planfix_task",
        /// 409: the project has an open line (neither accepted nor cancelled) with that title.
        DuplicateTitle = "duplicate_title",
        /// 422: a line's id is listed twice in `PUT /api/lines/order`: it can have one place
        /// only.
        DuplicateLine = "duplicate_line",
        /// 422: `PUT /api/lines/order` lists an id no line has. (A 404 would say the order
        /// itself is missing; like `unknown_project`, it is the body that names nothing.)
        UnknownLine = "unknown_line",
        /// 500: the daemon failed; the details are in its log, never in the answer.
        Internal = "internal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The codes are the strings the daemon sent before they were an enum, byte for byte.
    #[test]
    fn error_codes_are_the_strings_the_api_always_sent() {
        let sent = [
            (ErrorCode::Unauthorized, "unauthorized"),
            (ErrorCode::NotFound, "not_found"),
            (ErrorCode::BadRequest, "bad_request"),
            (ErrorCode::InvalidState, "invalid_state"),
            (ErrorCode::UnmergedCommits, "unmerged_commits"),
            (ErrorCode::Exists, "exists"),
            (ErrorCode::NotARepository, "not_a_repository"),
            (ErrorCode::UnknownProject, "unknown_project"),
            (ErrorCode::NotAnOption, "not_an_option"),
            (ErrorCode::AnswerStarted, "answer_started"),
            (ErrorCode::LevelLower, "level_lower"),
            (ErrorCode::CatcherOff, "catcher_off"),
            (ErrorCode::BadPlanfixTask, "bad_planfix_task"),
            (ErrorCode::DuplicateTitle, "duplicate_title"),
            (ErrorCode::DuplicateLine, "duplicate_line"),
            (ErrorCode::UnknownLine, "unknown_line"),
            (ErrorCode::Internal, "internal"),
        ];
        assert_eq!(sent.len(), ErrorCode::ALL.len());
        for (code, s) in sent {
            assert_eq!(serde_json::to_value(code).unwrap(), json!(s));
            assert_eq!(serde_json::from_value::<ErrorCode>(json!(s)).unwrap(), code);
            assert_eq!((code.as_str(), code.to_string()), (s, s.to_string()));
            assert_eq!(ErrorCode::parse(s), Some(code));
        }
        let body = ApiErrorBody {
            code: ErrorCode::UnmergedCommits,
            message: "m".into(),
        };
        let text = serde_json::to_string(&body).unwrap();
        assert_eq!(text, r#"{"code":"unmerged_commits","message":"m"}"#);
        assert_eq!(serde_json::from_str::<ApiErrorBody>(&text).unwrap(), body);
        assert!(serde_json::from_str::<ApiErrorBody>(r#"{"code":"nope","message":"m"}"#).is_err());
    }
}
