#pragma once
// The public interface of elementwise: include this one header.
#include "ew/api.hpp"
#include "ew/backend.hpp"
#include "ew/buffer.hpp"
#include "ew/context.hpp"
#include "ew/error.hpp"
#include "ew/expr.hpp"
#include "ew/ops.hpp"
#include "ew/reduce.hpp"
#include "ew/sharded.hpp"
#include "ew/span.hpp"
#include "ew/types.hpp"
#include "ew/version.hpp"
