//! The layers a registry was given, held to its tools when it is built.

use super::{Registry, RegistryError};

impl Registry {
    /// Refuses a layer given for a tool it does not have, a layer name that cannot be one,
    /// and a tool naming a layer it was not given.
    pub(super) fn check_layers(&self) -> Result<(), RegistryError> {
        let mut given = Vec::new();
        for tools in self.layers.selections() {
            let unknown = |name: &&String| self.get(name).is_none() && !self.may_be_mounted(name);
            if let Some(name) = tools.names().iter().find(unknown) {
                return Err(RegistryError::LayerForUnknownTool {
                    name: name.clone(),
                    suggestion: self.closest_name(name),
                });
            }
            if let Some(layer) = tools.layer_name() {
                tool_rules::check_layer_name(layer).map_err(|reason| {
                    RegistryError::UnknownLayer {
                        tool: None,
                        layer: layer.to_owned(),
                        reason,
                    }
                })?;
                given.push(layer);
            }
        }
        self.check_named_layers(&given)
    }

    /// Refuses a tool naming a layer not among `given`.
    fn check_named_layers(&self, given: &[&str]) -> Result<(), RegistryError> {
        for tool in self.tools().iter() {
            if let Some(layer) = tool.layers().iter().find(|layer| !given.contains(layer)) {
                let reason = match tool_rules::closest(layer, given.iter().copied(), 0.7) {
                    Some(close) => format!(
                        "the registry was not given a layer of that name (did you mean \
                         `{close}`?); give it with RegistryBuilder::named_layer"
                    ),
                    None => "the registry was not given a layer of that name; give it with \
                             RegistryBuilder::named_layer"
                        .to_owned(),
                };
                return Err(RegistryError::UnknownLayer {
                    tool: Some(tool.name().to_owned()),
                    layer: (*layer).to_owned(),
                    reason,
                });
            }
        }
        Ok(())
    }

    /// The layers a call of `tool` goes through, when any applies to it.
    pub(super) fn layers_for(
        &self,
        tool: &crate::catalog::Tool,
    ) -> Option<&std::sync::Arc<crate::layers::Stages>> {
        Some(&self.layers).filter(|stages| stages.apply_to(tool))
    }
}
