//! The API's one error type: a status, a stable `code`, a message. 5xx details are logged,
//! never sent.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use conveyor_api::{ApiErrorBody, ErrorCode};

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: ErrorCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
    pub fn unauthorized() -> ApiError {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            "a valid `Authorization: Bearer <token>` header is required",
        )
    }
    pub fn not_found(what: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, ErrorCode::NotFound, what)
    }
    pub fn bad_request(what: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::BadRequest, what)
    }
    pub fn conflict(code: ErrorCode, what: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, code, what)
    }
    /// A request valid by the document that refers to something the daemon cannot use: a path
    /// that is no repository, a project that does not exist, an option the question lacks.
    pub fn unprocessable(code: ErrorCode, what: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, code, what)
    }
}

impl From<crate::error::Error> for ApiError {
    fn from(e: crate::error::Error) -> ApiError {
        tracing::error!(error = %e, "request failed");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Internal,
            "internal error",
        )
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> ApiError {
        crate::error::Error::from(e).into()
    }
}

impl From<axum::extract::rejection::JsonRejection> for ApiError {
    fn from(e: axum::extract::rejection::JsonRejection) -> ApiError {
        ApiError::bad_request(e.body_text())
    }
}

impl From<axum::extract::rejection::QueryRejection> for ApiError {
    fn from(e: axum::extract::rejection::QueryRejection) -> ApiError {
        ApiError::bad_request(e.body_text())
    }
}

impl From<axum::extract::rejection::PathRejection> for ApiError {
    fn from(e: axum::extract::rejection::PathRejection) -> ApiError {
        ApiError::bad_request(e.body_text())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(ApiErrorBody {
                code: self.code,
                message: self.message,
            }),
        )
            .into_response()
    }
}
