//! Single layers of a KataGo network, as stored in the model file.

/// A 2-D convolution without bias (KataGo `ConvLayerDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct ConvLayer {
    /// Layer name from the file.
    pub name: String,
    /// Kernel height (odd).
    pub kernel_y: usize,
    /// Kernel width (odd).
    pub kernel_x: usize,
    /// Input channels.
    pub in_channels: usize,
    /// Output channels.
    pub out_channels: usize,
    /// Vertical dilation.
    pub dilation_y: usize,
    /// Horizontal dilation.
    pub dilation_x: usize,
    /// Weights in `[out][in][y][x]` order (ONNX `OIHW`), reordered from the file's `y,x,in,out`.
    pub weights: Vec<f32>,
}

impl ConvLayer {
    /// Number of learnable parameters.
    pub fn num_parameters(&self) -> u64 {
        self.weights.len() as u64
    }

    /// KataGo's crude spatial depth: 0 for 1x1, 1 for 3x3, 2 for 5x5...
    pub fn spatial_conv_depth(&self) -> f64 {
        (self.kernel_y + self.kernel_x).saturating_sub(2) as f64 / 4.0
    }
}

/// Inference-mode batch normalization (KataGo `BatchNormLayerDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct BatchNormLayer {
    /// Layer name from the file.
    pub name: String,
    /// Channels.
    pub num_channels: usize,
    /// Variance epsilon.
    pub epsilon: f32,
    /// Whether the file stored a learned scale (else it is all ones).
    pub has_scale: bool,
    /// Whether the file stored a learned bias (else it is all zeros).
    pub has_bias: bool,
    /// Running mean.
    pub mean: Vec<f32>,
    /// Running variance.
    pub variance: Vec<f32>,
    /// Scale (gamma); ones when `!has_scale`.
    pub scale: Vec<f32>,
    /// Bias (beta); zeros when `!has_bias`.
    pub bias: Vec<f32>,
}

impl BatchNormLayer {
    /// The per-channel affine map `x * scale + bias` this layer computes, in `f32` exactly as
    /// KataGo merges it: `scale / sqrt(variance + epsilon)` and `bias - merged_scale * mean`.
    pub fn merged_scale_bias(&self) -> (Vec<f32>, Vec<f32>) {
        let mut merged_scale = Vec::with_capacity(self.num_channels);
        let mut merged_bias = Vec::with_capacity(self.num_channels);
        for (((&s, &b), &m), &v) in self
            .scale
            .iter()
            .zip(&self.bias)
            .zip(&self.mean)
            .zip(&self.variance)
        {
            let ms = s / (v + self.epsilon).sqrt();
            merged_scale.push(ms);
            merged_bias.push(b - ms * m);
        }
        (merged_scale, merged_bias)
    }

    /// Number of learnable parameters (KataGo counts scale and bias, not the running statistics).
    pub fn num_parameters(&self) -> u64 {
        let per = self.num_channels as u64;
        u64::from(self.has_scale) * per + u64::from(self.has_bias) * per
    }
}

/// An activation function named by KataGo's model format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activation {
    /// `x` (`ACTIVATION_IDENTITY`).
    Identity,
    /// `max(x, 0)` (`ACTIVATION_RELU`; the only activation before model version 11).
    Relu,
    /// `x * tanh(softplus(x))` (`ACTIVATION_MISH`).
    Mish,
    /// `x * sigmoid(x)` (`ACTIVATION_SILU`).
    Silu,
}

impl Activation {
    /// The token the model format uses for this activation (model version 11 and later).
    pub fn file_name(self) -> &'static str {
        match self {
            Activation::Identity => "ACTIVATION_IDENTITY",
            Activation::Relu => "ACTIVATION_RELU",
            Activation::Mish => "ACTIVATION_MISH",
            Activation::Silu => "ACTIVATION_SILU",
        }
    }

    /// The activation a model-format token names, if any.
    pub fn from_file_name(token: &[u8]) -> Option<Activation> {
        [
            Activation::Identity,
            Activation::Relu,
            Activation::Mish,
            Activation::Silu,
        ]
        .into_iter()
        .find(|a| a.file_name().as_bytes() == token)
    }

    /// Applies the activation to one value, with KataGo's Eigen-backend numerics
    /// (softplus switches to the identity above 20).
    pub fn apply(self, x: f32) -> f32 {
        match self {
            Activation::Identity => x,
            Activation::Relu => x.max(0.0),
            Activation::Mish => {
                let softplus = if x < 20.0 { x.exp().ln_1p() } else { x };
                x * softplus.tanh()
            }
            Activation::Silu => x / (1.0 + (-x).exp()),
        }
    }
}

/// A named activation layer (KataGo `ActivationLayerDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct ActivationLayer {
    /// Layer name from the file.
    pub name: String,
    /// The function.
    pub activation: Activation,
}

/// A dense layer over channels without bias (KataGo `MatMulLayerDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct MatMulLayer {
    /// Layer name from the file.
    pub name: String,
    /// Input channels.
    pub in_channels: usize,
    /// Output channels.
    pub out_channels: usize,
    /// Weights in `[in][out]` order (the file's order).
    pub weights: Vec<f32>,
}

impl MatMulLayer {
    /// Number of learnable parameters.
    pub fn num_parameters(&self) -> u64 {
        self.weights.len() as u64
    }

    /// The same layer as a 1x1 convolution (weights `[out][in]`), for dense layers over
    /// every point of a map.
    pub fn to_conv(&self) -> ConvLayer {
        let (c, k) = (self.in_channels, self.out_channels);
        ConvLayer {
            name: self.name.clone(),
            kernel_y: 1,
            kernel_x: 1,
            in_channels: c,
            out_channels: k,
            dilation_y: 1,
            dilation_x: 1,
            weights: (0..k)
                .flat_map(|o| {
                    (0..c).map(move |i| self.weights.get(i * k + o).copied().unwrap_or(0.0))
                })
                .collect(),
        }
    }
}

/// A per-channel bias (KataGo `MatBiasLayerDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct MatBiasLayer {
    /// Layer name from the file.
    pub name: String,
    /// Channels.
    pub num_channels: usize,
    /// The bias values.
    pub weights: Vec<f32>,
}

impl MatBiasLayer {
    /// Number of learnable parameters.
    pub fn num_parameters(&self) -> u64 {
        self.weights.len() as u64
    }
}

/// The trunk-tip RMS normalization with gain and bias (KataGo `RMSNormLayerDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct RmsNormLayer {
    /// Layer name from the file.
    pub name: String,
    /// Channels.
    pub num_channels: usize,
    /// Epsilon added to the mean square.
    pub epsilon: f32,
    /// `true`: one RMS over all channels and on-board points of a position;
    /// `false`: one RMS per point over its channels.
    pub spatial: bool,
    /// Per-channel gain.
    pub gamma: Vec<f32>,
    /// Per-channel bias.
    pub beta: Vec<f32>,
}

impl RmsNormLayer {
    /// Number of learnable parameters.
    pub fn num_parameters(&self) -> u64 {
        (self.gamma.len() + self.beta.len()) as u64
    }
}

/// The RMS normalization inside transformer blocks: per point over channels, gain only
/// (KataGo `TransformerRMSNormDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct TransformerRmsNorm {
    /// Layer name from the file.
    pub name: String,
    /// Channels.
    pub num_channels: usize,
    /// Epsilon added to the mean square.
    pub epsilon: f32,
    /// Per-channel gain.
    pub weight: Vec<f32>,
}

impl TransformerRmsNorm {
    /// Number of learnable parameters.
    pub fn num_parameters(&self) -> u64 {
        self.weight.len() as u64
    }
}
