// simpler's "platform_comm/comm_context.h" (communication between dies).
#pragma once
#error "pfsim lacks \"platform_comm/comm_context.h\": pfsim simulates one die; communication between dies (comm contexts, their windows and signals) is not modeled"
