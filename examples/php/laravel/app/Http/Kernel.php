<?php

declare(strict_types=1);

namespace App\Http;

use Illuminate\Foundation\Http\Kernel as HttpKernel;
use Illuminate\Routing\Middleware\ThrottleRequestsWithRedis;

class Kernel extends HttpKernel
{
    /**
     * Laravel's documented way to throttle with Redis: GoblinServiceProvider makes the container
     * give Goblin's ThrottleRequestsWithGoblin for it.
     */
    protected $routeMiddleware = [
        'throttle' => ThrottleRequestsWithRedis::class,
    ];
}
