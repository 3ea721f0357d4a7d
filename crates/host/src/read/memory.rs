//! Placeholder: filled in by the next step.

use super::Ctx;
use crate::model::Host;

pub(super) fn read(_cx: &mut Ctx, _host: &mut Host) {}
