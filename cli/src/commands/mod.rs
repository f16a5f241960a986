//! One module per subcommand.

pub(crate) mod approvals;
pub(crate) mod capabilities;
pub(crate) mod conform;
pub(crate) mod explain;
pub(crate) mod lint;
pub(crate) mod registry;
pub(crate) mod rules;
pub(crate) mod serve;
pub(crate) mod tools;
pub(crate) mod validate;
