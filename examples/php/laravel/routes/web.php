<?php

declare(strict_types=1);

use App\Jobs\ImportJob;
use Illuminate\Support\Facades\Redis;
use Illuminate\Support\Facades\Route;

// Three requests a minute per client: the fourth is a 429 with Retry-After.
Route::get('/api/ping', fn () => ['pong' => true])->middleware('throttle:3,1');

// Dispatches an import (the sync queue runs it now, through its middleware): it runs once a
// minute per account; past that it is released to try later.
Route::post('/accounts/{account}/import', function (string $account) {
    ImportJob::dispatch($account);

    return ['account' => $account, 'ran' => (int) Redis::get("imports:ran:$account")];
});
