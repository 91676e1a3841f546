# frozen_string_literal: true

# rackup examples/ruby/config.ru (or puma): the app of app.rb.
require_relative "app"
run App
