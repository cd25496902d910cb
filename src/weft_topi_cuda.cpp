// Compiles topi's GPU schedules and tensor-core intrinsics once (see include/weft/topi/cuda.hpp).
#include <weft/topi/impl/cuda_injective.hpp>
#include <weft/topi/impl/cuda_gemm.hpp>
#include <weft/topi/impl/cuda_rows.hpp>
#include <weft/topi/impl/cuda_conv.hpp>
#include <weft/topi/impl/cuda_dispatch.hpp>
#include <weft/topi/impl/cuda_tensorcore.hpp>
